package dev.fcap.model;

/** Whether a rule blocks ({@link #ENFORCE}) or only reports what it would have blocked ({@link #SHADOW}). */
public enum Mode {
  ENFORCE("enforce"),
  SHADOW("shadow");

  private final String id;

  Mode(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  public static java.util.Optional<Mode> fromId(String id) {
    for (Mode m : values()) {
      if (m.id.equals(id)) {
        return java.util.Optional.of(m);
      }
    }
    return java.util.Optional.empty();
  }

  @Override
  public String toString() {
    return id;
  }
}
