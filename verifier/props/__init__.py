"""Property kinds above the engines: ordering patterns and bounded response compile to
monitors (`monitor`), run through any engine (`plan`), and read in plain words (`describe`)."""
