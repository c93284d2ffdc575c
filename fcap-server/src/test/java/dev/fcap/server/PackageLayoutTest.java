package dev.fcap.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The server's package tree stays a tree: the root package {@code dev.fcap.server} is the wiring
 * ({@link FcapServer}, its configuration, the {@link StoreProvider} plug-in point) that imports every
 * other package, and nothing in the server imports it back; the packages below it ({@code guard},
 * {@code decision}, {@code http}, {@code grpc}, {@code admin}, ...) import each other without a cycle.
 * Read from the compiled main classes, so a fully qualified name or a same-package habit cannot hide a
 * reference. A failure names each offending class and member.
 */
class PackageLayoutTest {
  private static final JavaClasses SERVER = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("dev.fcap.server");

  @Test
  void thePackagesBelowTheWiringFormNoCycle() {
    slices().matching("dev.fcap.server.(*)..").should().beFreeOfCycles().check(SERVER);
  }

  @Test
  void nothingImportsTheWiring() {
    noClasses().that().resideOutsideOfPackage("dev.fcap.server")
        .should().dependOnClassesThat().resideInAPackage("dev.fcap.server")
        .because("the root package is the wiring: it imports everything, and everything else stays usable "
            + "without it")
        .check(SERVER);
  }

  @Test
  void nothingUsesTheEngineInternals() {
    noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.fcap.store.internal..", "dev.fcap.algorithm..")
        .because("the server reaches a store through the storage SPI alone; the calling-thread fast path and the "
            + "algorithms are fcap-core's own")
        .check(SERVER);
  }
}
