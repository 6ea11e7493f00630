"""logscope's version, in a module of its own so lower layers (the compiled-grammar cache) can read it
without importing the package's public API."""

__version__ = "0.1.0"
