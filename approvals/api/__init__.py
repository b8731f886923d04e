"""The JSON API, documented by the OpenAPI schema at /api/schema/."""
