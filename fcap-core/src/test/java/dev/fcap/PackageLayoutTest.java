package dev.fcap;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The core's packages import each other one way only: {@code model} imports none of them;
 * {@code policy} and the store SPI ({@code store}) import {@code model}; {@code store.internal} (the
 * embedded store's fast path, not API) imports the SPI; {@code algorithm} imports those; the embedded
 * store ({@code store.memory}) imports the SPI, the internal types and the algorithms; the
 * {@code engine} imports everything but the embedded store. Read from the compiled main classes, so
 * a fully qualified name or a same-package habit cannot hide a reference. A failure names each
 * offending class and member.
 */
class PackageLayoutTest {
  private static final JavaClasses CORE = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("dev.fcap");

  @Test
  void thePackagesFormNoCycle() {
    slices().matching("dev.fcap.(**)").should().beFreeOfCycles().check(CORE);
  }

  @Test
  void eachPackageImportsOnlyThePackagesBelowIt() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("model").definedBy("dev.fcap.model..")
        .layer("uri").definedBy("dev.fcap.uri..")
        .layer("time").definedBy("dev.fcap.time..")
        .layer("policy").definedBy("dev.fcap.policy..")
        .layer("store SPI").definedBy("dev.fcap.store")
        .layer("store internal").definedBy("dev.fcap.store.internal..")
        .layer("algorithm").definedBy("dev.fcap.algorithm..")
        .layer("memory store").definedBy("dev.fcap.store.memory..")
        .layer("engine").definedBy("dev.fcap.engine..")
        .whereLayer("model").mayNotAccessAnyLayer()
        .whereLayer("uri").mayNotAccessAnyLayer()
        .whereLayer("time").mayNotAccessAnyLayer()
        .whereLayer("policy").mayOnlyAccessLayers("time", "model")
        .whereLayer("store SPI").mayOnlyAccessLayers("time", "model")
        .whereLayer("store internal").mayOnlyAccessLayers("time", "model", "store SPI")
        .whereLayer("algorithm").mayOnlyAccessLayers("time", "model", "store SPI", "store internal")
        .whereLayer("memory store").mayOnlyAccessLayers("time", "model", "store SPI", "store internal", "algorithm")
        .whereLayer("engine").mayOnlyAccessLayers("time", "model", "policy", "store SPI", "store internal", "algorithm")
        .check(CORE);
  }

  @Test
  void everyClassIsInALayer() {
    classes().should()
        .resideInAnyPackage("dev.fcap.model..", "dev.fcap.uri..", "dev.fcap.time..", "dev.fcap.policy..", "dev.fcap.store", "dev.fcap.store.internal..", "dev.fcap.algorithm..",
            "dev.fcap.store.memory..", "dev.fcap.engine..")
        .because("a new package gets its place in the layers above")
        .check(CORE);
  }
}
