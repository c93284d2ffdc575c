package dev.fcap.server;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Headless Chromium driven by Selenium, for the console tests.
 *
 * <p>Debian's {@code chromium} and {@code chromium-driver} are used by their paths, so Selenium
 * Manager never tries to download a browser or driver (the build has no network for that). A missing
 * browser or driver fails the test with the command that installs them: these tests never skip.
 * Each browser gets a fresh profile directory, removed on {@link #close()}.
 */
final class Browser implements AutoCloseable {
  static final Path CHROMIUM = Path.of(System.getProperty("chromium.binary", "/usr/bin/chromium"));
  static final Path CHROMEDRIVER = Path.of(System.getProperty("chromedriver.binary", "/usr/bin/chromedriver"));
  private static final Duration WAIT = Duration.ofSeconds(15);

  final ChromeDriver driver;
  private final Path profile;

  private Browser(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  static Browser start() {
    for (Path p : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(p)) {
        throw new AssertionError(p + " is missing: the console tests need Debian's headless Chromium; install it with "
            + "'apt-get install -y chromium chromium-driver' (or point -Dchromium.binary / -Dchromedriver.binary "
            + "at them)");
      }
    }
    try {
      Path profile = Files.createTempDirectory("fcap-console-chromium");
      ChromeOptions options = new ChromeOptions();
      options.setBinary(CHROMIUM.toFile());
      options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--window-size=1280,900", "--lang=en-US", "--user-data-dir=" + profile);
      ChromeDriverService service = new ChromeDriverService.Builder()
          .usingDriverExecutable(CHROMEDRIVER.toFile())
          .usingAnyFreePort()
          .build();
      return new Browser(new ChromeDriver(service, options), profile);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void open(String url) {
    driver.get(url);
  }

  WebElement find(String css) {
    return driver.findElement(By.cssSelector(css));
  }

  List<WebElement> findAll(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  WebElement id(String id) {
    return driver.findElement(By.id(id));
  }

  /** Replaces an input's value as a user would: select all, type. */
  void type(String id, String text) {
    WebElement e = id(id);
    e.clear();
    if (!text.isEmpty()) {
      e.sendKeys(text);
    }
  }

  /**
   * Waits until the element's text contains {@code text}; returns the whole text. Views that redraw
   * (the live view does on every poll) replace their elements, so a stale element is looked up again.
   */
  String waitText(String css, String text) {
    return new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class)
        .withMessage(() -> css + " never contained '" + text + "'; it shows: " + textOrMissing(css))
        .until(d -> {
          String t = d.findElement(By.cssSelector(css)).getText();
          return t.contains(text) ? t : null;
        });
  }

  private String textOrMissing(String css) {
    List<WebElement> found = findAll(css);
    try {
      return found.isEmpty() ? "(no such element)" : found.get(0).getText();
    } catch (StaleElementReferenceException e) {
      return "(redrawn)";
    }
  }

  WebElement waitVisible(String css) {
    return new WebDriverWait(driver, WAIT).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
  }

  void waitGone(String css) {
    new WebDriverWait(driver, WAIT).until(ExpectedConditions.invisibilityOfElementLocated(By.cssSelector(css)));
  }

  void waitUntil(String description, java.util.function.BooleanSupplier condition) {
    new WebDriverWait(driver, WAIT).withMessage(description).until(d -> condition.getAsBoolean());
  }

  Object script(String js, Object... args) {
    return driver.executeScript(js, args);
  }

  void size(int width, int height) {
    driver.manage().window().setSize(new Dimension(width, height));
  }

  /** Light or dark, as the operating system would ask for it through prefers-color-scheme. */
  void colorScheme(String scheme) {
    driver.executeCdpCommand("Emulation.setEmulatedMedia",
        Map.of("features", List.of(Map.of("name", "prefers-color-scheme", "value", scheme))));
  }

  /** Saves a PNG of the viewport. */
  Path screenshot(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      File shot = driver.getScreenshotAs(OutputType.FILE);
      Files.copy(shot.toPath(), file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      try (Stream<Path> files = Files.walk(profile)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // a leftover temp profile is harmless
      }
    }
  }
}
