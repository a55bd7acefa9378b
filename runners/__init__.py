"""Publishers: EnvRunners stepping gymnasium envs, the Algorithm, and numpy learners."""

__all__ = ()
