"""Test tooling shipped with the package: an OpenAI-compatible fake server with faults."""

from .server import FakeOpenAIServer

__all__ = ["FakeOpenAIServer"]
