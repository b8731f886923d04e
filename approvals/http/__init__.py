"""HTTP plumbing shared by every door: the middleware, request ids, the client's address
and the sign-in lockout answer."""
