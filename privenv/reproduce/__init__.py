"""Paper reproductions (`privenv reproduce <id>`)."""
