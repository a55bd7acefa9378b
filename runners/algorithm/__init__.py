"""The Algorithm and what it owns: the surface that algorithm authors import."""

from ._algorithm import Algorithm as Algorithm
from ._checkpoint import StoredConfig as StoredConfig, read_stored_config as read_stored_config
from ._structure import check_structure as check_structure

__all__ = ("Algorithm", "StoredConfig", "check_structure", "read_stored_config")
