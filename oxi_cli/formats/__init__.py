"""Colour file parsers: LUT and ASC CDL files in, validated op values out (no pixel maths here)."""
