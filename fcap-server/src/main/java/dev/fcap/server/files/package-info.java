/**
 * Files the server keeps in its data directory, written so that a crash never leaves half of one
 * ({@link dev.fcap.server.files.AtomicFile}). A leaf: it imports no other server package.
 */
package dev.fcap.server.files;
