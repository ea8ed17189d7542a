"""oxi: colour and image processing for production image files."""

__version__ = "0.1.0"
