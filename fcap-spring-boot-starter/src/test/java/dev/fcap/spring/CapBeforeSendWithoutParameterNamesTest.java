package dev.fcap.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.client.Message;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A sender compiled without {@code -parameters} (javac's default outside Spring Boot's build setup):
 * {@code #phone} cannot be resolved, and the error says what to change; positional names still work.
 */
class CapBeforeSendWithoutParameterNamesTest {
  @TempDir Path dir;

  @Test
  void namedParameterWithoutParameterNamesSaysWhatToChange() throws Exception {
    Path src = Files.createDirectories(dir.resolve("src/demo")).resolve("Gateway.java");
    Files.writeString(src, """
        package demo;
        import dev.fcap.spring.CapBeforeSend;
        public class Gateway {
          public int sent;
          @CapBeforeSend(recipient = "#phone", content = "#text")
          public void byName(String phone, String text) { sent++; }
          @CapBeforeSend(recipient = "#p0", content = "#p1")
          public void byPosition(String phone, String text) { sent++; }
        }
        """);
    Path classes = Files.createDirectories(dir.resolve("classes"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", System.getProperty("java.class.path"),
        src.toString());
    assertThat(rc).isZero();

    try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      Class<?> type = loader.loadClass("demo.Gateway");
      assertThat(List.of(type.getMethod("byName", String.class, String.class).getParameters()))
          .allSatisfy(p -> assertThat(p.isNamePresent()).isFalse());
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(FcapAutoConfiguration.class))
          .withPropertyValues("fcap.rules[0].id=per-minute", "fcap.rules[0].limit=3", "fcap.rules[0].window=1m",
              "fcap.rules[0].key[0]=recipient")
          .withClassLoader(loader)
          .withBean("gateway", Object.class, () -> newInstance(type))
          .run(context -> {
            Object gateway = context.getBean("gateway");
            Method byName = gateway.getClass().getMethod("byName", String.class, String.class);
            assertThatThrownBy(() -> invoke(byName, gateway, "+15550020", "hi"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'#phone' names the parameter 'phone'")
                .hasMessageContaining("compiled without parameter names")
                .hasMessageContaining("-parameters")
                .hasMessageContaining("#p0");
            invoke(gateway.getClass().getMethod("byPosition", String.class, String.class), gateway, "+15550020", "hi");
            assertThat(context.getBean(Fcap.class).check(Message.builder("+15550020").build()).rules())
                .as("only the positional call was decided").singleElement()
                .satisfies(o -> assertThat(o.used()).isEqualTo(1));
          });
    }
  }

  private static Object newInstance(Class<?> type) {
    try {
      return type.getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void invoke(Method m, Object target, Object... args) throws Throwable {
    try {
      m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
