package dev.fcap.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * fcap-core's Jackson is optional: the embedded engine with a policy built in code runs in a class
 * loader that holds fcap-core and nothing else (the JDK's platform loader as parent, so no Jackson),
 * while the YAML path in the same loader fails for want of Jackson, which shows the isolation is real.
 */
class EmbeddedWithoutJacksonTest {

  @Test
  void theBuilderPathRunsWithoutJacksonOnTheClassPath() throws Exception {
    try (URLClassLoader coreOnly = coreOnly()) {
      assertThatThrownBy(() -> coreOnly.loadClass("com.fasterxml.jackson.databind.ObjectMapper"))
          .isInstanceOf(ClassNotFoundException.class);
      Method run = coreOnly.loadClass(EmbeddedExample.class.getName()).getDeclaredMethod("run");
      run.setAccessible(true);
      @SuppressWarnings("unchecked")
      List<String> lines = (List<String>) run.invoke(null);
      assertThat(lines).hasSize(3);
      assertThat(lines.get(0)).isEqualTo("message 1: send");
      assertThat(lines.get(1)).isEqualTo("message 2: send");
      assertThat(lines.get(2)).startsWith("message 3: blocked by [same-content-per-59s], retry in ");
    }
  }

  @Test
  void theYamlPathNeedsJacksonSoTheLoaderReallyHasNone() throws Exception {
    try (URLClassLoader coreOnly = coreOnly()) {
      Throwable failure = null;
      try {
        coreOnly.loadClass("dev.fcap.policy.PolicyParser").getMethod("parse", String.class).invoke(null, "policies: []");
      } catch (InvocationTargetException e) {
        failure = e.getCause();
      } catch (LinkageError e) {
        failure = e;
      }
      assertThat(failure).isInstanceOf(NoClassDefFoundError.class).hasMessageContaining("jackson");
    }
  }

  /** fcap-core's classes and this example, on the platform loader: no application class path. */
  private static URLClassLoader coreOnly() throws Exception {
    URL main = Path.of("target", "classes").toAbsolutePath().toUri().toURL();
    URL tests = Path.of("target", "test-classes").toAbsolutePath().toUri().toURL();
    return new URLClassLoader(new URL[] {main, tests}, ClassLoader.getPlatformClassLoader());
  }
}
