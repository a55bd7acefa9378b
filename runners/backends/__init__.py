"""Runner backends: where EnvRunners run (in this loop, worker processes), and the group."""
