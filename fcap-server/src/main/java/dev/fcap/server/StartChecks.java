package dev.fcap.server;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What a start checks before it writes anything, and how it words what it finds: the port of
 * {@code listen} is bound once and let go before {@code data/} is created, and a path that cannot be
 * used is reported with its setting and why (permission, not a directory, read-only, disk full).
 */
final class StartChecks {
  private StartChecks() {}

  /**
   * Binds {@code host:port} and lets it go, so a port in use stops the start before anything is
   * written; port 0 (any free port) needs no check. The server binds it again moments later: a
   * process taking the port in between gets the same message from {@link #bindFailed}.
   */
  static void portFree(String host, int port) {
    if (port == 0) {
      return;
    }
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true); // as the server's own socket: a port in TIME_WAIT is free to it
      probe.bind(new InetSocketAddress(InetAddress.getByName(host), port));
    } catch (IOException e) {
      throw bindFailed(host, port, e);
    }
  }

  /** The start error for a bind that failed with {@code error}. */
  static ConfigLoader.ConfigException bindFailed(String host, int port, Throwable error) {
    String text = String.valueOf(error.getMessage()).toLowerCase(Locale.ROOT);
    String why;
    if (text.contains("in use")) {
      why = "the port is in use by another process; stop it or choose another port";
    } else if (text.contains("permission denied") || text.contains("access denied")) {
      why = "permission denied: ports below 1024 need privileges; choose a port from 1024";
    } else if (text.contains("assign") || error instanceof java.net.UnknownHostException) {
      why = "the address is not one of this machine's; use 127.0.0.1, 0.0.0.0 or an address of this host";
    } else {
      why = error.getMessage();
    }
    return new ConfigLoader.ConfigException("listen: cannot listen on " + host + ":" + port + ": " + why
        + " (setting listen: --listen, FCAP_LISTEN or listen: in fcap.yaml)");
  }

  /** True when {@code error} or one of its causes is a bind failure. */
  static boolean isBindFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof BindException || String.valueOf(t.getMessage()).contains("bind(")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The start error for {@code path} of {@code setting} that could not be used, {@code dir} being the
   * directory it needs (the path itself, or a file's parent): says why, from the exception where it
   * tells, and what on disk is in the way.
   */
  static ConfigLoader.ConfigException pathFailed(String setting, Path path, Path dir, Throwable error) {
    String reason = null;
    for (Throwable t = error; t != null && reason == null; t = t.getCause()) {
      reason = reason(t);
    }
    Path inTheWay = inTheWay(dir);
    String why = reason == null && inTheWay == null ? String.valueOf(error.getMessage())
        : reason == null ? "not a directory" : reason;
    return new ConfigLoader.ConfigException(setting + ": cannot use " + path + ": " + why
        + (inTheWay == null ? "" : " (" + inTheWay + " is a file)"));
  }

  private static String reason(Throwable t) {
    String text = String.valueOf(t instanceof FileSystemException f && f.getReason() != null ? f.getReason()
        : t.getMessage()).toLowerCase(Locale.ROOT);
    if (t instanceof AccessDeniedException || text.contains("permission denied")) {
      return "permission denied (the user running fcap may not write there)";
    }
    if (t instanceof NotDirectoryException || t instanceof FileAlreadyExistsException
        || text.contains("not a directory")) {
      return "not a directory";
    }
    if (text.contains("read-only file system")) {
      return "read-only file system";
    }
    if (text.contains("no space left")) {
      return "disk full (no space left on device)";
    }
    if (text.contains("quota")) {
      return "disk quota exceeded";
    }
    if (t instanceof NoSuchFileException) {
      return "does not exist and cannot be created";
    }
    return null;
  }

  /** The nearest existing part of {@code dir} when it is not a directory, else null. */
  private static Path inTheWay(Path dir) {
    for (Path p = dir.toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p)) {
        return Files.isDirectory(p) ? null : p;
      }
    }
    return null;
  }
}
