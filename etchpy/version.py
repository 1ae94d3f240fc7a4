"""The package version (one place; pyproject.toml names the same)."""
__version__ = "0.1.0"
