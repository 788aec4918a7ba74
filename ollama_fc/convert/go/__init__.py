"""Go template builders: text operations, run-time string lists and `define` helpers, each
writing statements through an `Emitter` (textops.py) and knowing nothing of Jinja."""
