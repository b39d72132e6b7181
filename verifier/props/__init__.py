"""Property kinds above the engines: ordering patterns and bounded response compile to
monitors (`monitor`), their results read back as the claim's (`mapback`), and read in plain
words (`describe`); the portfolio (`verifier.portfolio`) runs them through the engines."""
