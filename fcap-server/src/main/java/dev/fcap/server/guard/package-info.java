/**
 * What stands between a caller and the engine, shared by every part of the server: the refusal each
 * check throws ({@link dev.fcap.server.guard.ApiException}), the checks of an incoming message
 * ({@link dev.fcap.server.guard.Messages}), the shape limits and safeguard settings, and the throttled
 * warning a hostile caller can trigger. A leaf: it imports no other server package.
 */
package dev.fcap.server.guard;
