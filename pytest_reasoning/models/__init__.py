"""Model access: the client protocol, the LiteLLM client, the response cache, the local server."""
