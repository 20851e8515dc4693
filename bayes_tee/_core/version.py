"""The package version (also in ``pyproject.toml``; a test keeps them equal)."""

__version__ = "0.2.0"
