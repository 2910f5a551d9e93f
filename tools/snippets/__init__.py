"""The snippet checker: every code block a reader sees on the site is verified.

``python -m tools.snippets`` reads the doctrees of a built site, finds every
literal block (inline code, ``literalinclude``, notebook cells, Doxygen
examples rendered by breathe), verifies each one by its language and prints a
table per page ending in ``snippets: N verified, 0 unverified, K exempt``.
See CONTRIBUTING.md ("How each kind of code block is verified").
"""
