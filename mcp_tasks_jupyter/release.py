"""The package's version, in the one place the build reads it from (``[tool.hatch.version]``)."""

__version__ = "0.1.0"
