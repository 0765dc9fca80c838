"""MuSR: murder mysteries, object placements and team allocations, told as stories from
symbolic facts through reasoning trees (seed 003)."""

from .task import MurderMysteryTask, ObjectPlacementTask, TeamAllocationTask

__all__ = ["TASKS", "MurderMysteryTask", "ObjectPlacementTask", "TeamAllocationTask"]

TASKS = (MurderMysteryTask, ObjectPlacementTask, TeamAllocationTask)
