"""Test tooling shipped with the package: an OpenAI-compatible fake server with faults
(``pytest_reasoning.testing.server.FakeOpenAIServer``)."""
