"""Stand-ins for network peers in tests: scripted servers."""
