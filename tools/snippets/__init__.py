"""The snippet checker (``python -m tools.snippets``): every code block on the built site is verified.
See CONTRIBUTING.md, "How each kind of code block is verified"."""
