"""Engines: take an IR model and claims, return CheckResults. They never print or read files."""
