package dev.fcap.server.http;

import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.file.FileService;
import com.linecorp.armeria.server.file.HttpFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The operator console (docs/console.md): static files from the jar, nothing else.
 *
 * <p>{@code GET /} is {@code console/index.html}; its scripts and styles are under {@code /console/};
 * Chart.js comes from its webjar at {@code /console/vendor/chart.umd.min.js}. The console is a plain
 * client of the public API (it sends the API key the operator types), so these routes need no key and
 * hold no data. A strict Content-Security-Policy (scripts and connections to this origin only) keeps
 * anything injected into the page from reading the key.
 */
public final class ConsoleRoutes {
  static final String ROOT = "console";
  private static final String CHARTJS_POM = "META-INF/maven/org.webjars.npm/chart.js/pom.properties";
  static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
      + "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

  private ConsoleRoutes() {}

  /** Binds {@code /} and {@code /console/}. */
  public static void bind(ServerBuilder sb) {
    ClassLoader cl = ConsoleRoutes.class.getClassLoader();
    sb.service("/", secured(HttpFile.builder(cl, ROOT + "/index.html").cacheControl("no-cache").build().asService()));
    sb.service("/console/vendor/chart.umd.min.js", secured(HttpFile.builder(cl, "META-INF/resources/webjars/chart.js/"
        + chartJsVersion(cl) + "/dist/chart.umd.min.js").contentType(MediaType.JAVASCRIPT_UTF_8)
        .cacheControl("max-age=86400").build().asService()));
    sb.serviceUnder("/console/", secured(FileService.builder(cl, ROOT).cacheControl("no-cache").build()));
  }

  private static HttpService secured(HttpService files) {
    return files.decorate((delegate, ctx, req) -> {
      ctx.addAdditionalResponseHeader(HttpHeaderNames.CONTENT_SECURITY_POLICY, CSP);
      ctx.addAdditionalResponseHeader(HttpHeaderNames.X_CONTENT_TYPE_OPTIONS, "nosniff");
      ctx.addAdditionalResponseHeader("referrer-policy", "no-referrer");
      return delegate.serve(ctx, req);
    });
  }

  /** The webjar's version, from its Maven metadata, so a Chart.js upgrade is a pom change only. */
  static String chartJsVersion(ClassLoader cl) {
    try (InputStream in = cl.getResourceAsStream(CHARTJS_POM)) {
      if (in == null) {
        throw new IllegalStateException("the Chart.js webjar (org.webjars.npm:chart.js) is not on the class path: "
            + CHARTJS_POM + " is missing");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
