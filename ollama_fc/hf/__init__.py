"""Hugging Face's side: render a chat template as transformers does, and probe its input shape."""
