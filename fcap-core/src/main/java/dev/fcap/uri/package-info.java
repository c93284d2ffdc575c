/**
 * The URIs an operator configures (a store, an audit sink, a rules source), apart from what a store
 * does with them: {@link dev.fcap.uri.Redaction} keeps their secrets out of logs and messages, for
 * every module that reports a URI.
 */
package dev.fcap.uri;
