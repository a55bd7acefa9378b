"""The Algorithm and what it owns: the surface that algorithm authors import."""

from ._algorithm import Algorithm as Algorithm
from ._structure import check_structure as check_structure

__all__ = ("Algorithm", "check_structure")
