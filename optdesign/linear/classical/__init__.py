"""Classical design criteria (work in progress)."""
