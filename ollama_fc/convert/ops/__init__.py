"""What the Jinja syntax lowers to, taking Values (never a Jinja scope): values, emission,
attribute access, tests and comparisons, strings, filters, selections, JSON."""
