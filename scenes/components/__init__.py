"""Reusable visual pieces. Every piece takes real arrays (from a trace) and never invents numbers."""
