package dev.fcap.server.admin;

import dev.fcap.model.Policy;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where the policies live between restarts and how nodes learn of changes.
 *
 * <p>Implementations: {@link FileRulesSource} (a YAML file: written atomically, watched for hand
 * edits). The Redis source of module fcap-server-redis keeps the policies in one key, writes them by
 * compare-and-set on their digest, and polls the digest so every node picks a change up within a
 * second.
 */
public interface RulesSource extends AutoCloseable {

  /** Where the rules are, for logs: e.g. {@code file /srv/fcap/rules.yaml}. */
  String describe();

  /** The policies as they are now. Throws {@code PolicyException} if the source holds an invalid policy. */
  List<Policy> load() throws IOException;

  /** Replaces all policies, atomically: a reader sees the old set or the new one, never a mix. */
  void save(List<Policy> policies) throws IOException;

  /**
   * Calls {@code onChange} with the new policies whenever they change other than by {@link #save}
   * of this instance (a hand edit, another node). Invalid content is logged and not delivered.
   */
  void watch(Consumer<List<Policy>> onChange);

  /** The last refused change, while the source still holds it; empty when the source's content is in force. */
  default java.util.Optional<RejectedEdit> rejectedEdit() {
    return java.util.Optional.empty();
  }

  /** Changes seen by {@link #watch} but not delivered (invalid, unreadable) or not applied; for metrics. */
  default long reloadFailures() {
    return 0;
  }

  @Override
  void close();
}
