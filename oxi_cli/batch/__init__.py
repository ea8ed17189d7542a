"""Batches: many inputs (files, folders, globs, frame sequences), output naming, memory-aware --jobs, reports."""
