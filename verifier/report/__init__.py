"""Reports: turn ModelRuns into text, JSON, Markdown, HTML, diagrams, JUnit and SARIF.

Consumes results only; never imports z3.
"""
