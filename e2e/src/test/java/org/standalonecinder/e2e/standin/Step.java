package org.standalonecinder.e2e.standin;

import java.util.List;

/**
 * One thing the stand-in does after a look at an object: a write to the API server, an event, a
 * look again, or a retry with backoff. The rules return them in order; {@link StandInWrites}
 * carries them out, and stops at the first that fails.
 */
sealed interface Step {

  /** The object an event or a finalizer change is about. */
  record Target(String kind, String namespace, String name) {
    static Target snapshot(Snap s) {
      return new Target("VolumeSnapshot", s.namespace(), s.name());
    }

    static Target content(String name) {
      return new Target("VolumeSnapshotContent", null, name);
    }

    static Target claim(String namespace, String name) {
      return new Target("PersistentVolumeClaim", namespace, name);
    }

    @Override
    public String toString() {
      return namespace == null ? kind + " " + name : kind + " " + namespace + "/" + name;
    }
  }

  /** The finalizers of {@code target} (at {@code resourceVersion}) become {@code finalizers}. */
  record Finalizers(Target target, String resourceVersion, List<String> finalizers, String change)
      implements Step {
    @Override
    public String toString() {
      return "finalizers of " + target + ": " + change;
    }
  }

  /** The snapshot's status gets this error, and {@code readyToUse: false} if asked. */
  record SnapshotError(Snap snapshot, String message, boolean setReadyFalse) implements Step {
    @Override
    public String toString() {
      return "error of VolumeSnapshot "
          + snapshot.key()
          + (setReadyFalse ? " (not ready)" : "")
          + ": "
          + message;
    }
  }

  /** The snapshot's status follows its content's ({@link ContentRules#follow}). */
  record FollowContent(Snap snapshot, SnapContent content) implements Step {
    @Override
    public String toString() {
      return "status of VolumeSnapshot " + snapshot.key() + " follows " + content.name();
    }
  }

  /** A pre-provisioned content gets the snapshot's uid in its ref, and the snapshot's class. */
  record BindContent(SnapContent content, String uid, String className) implements Step {
    @Override
    public String toString() {
      return "bind "
          + content.name()
          + " to uid "
          + uid
          + (className == null ? "" : ", class " + className);
    }
  }

  /** The content gets the annotation {@code key: value}. */
  record Annotate(SnapContent content, String key, String value) implements Step {
    @Override
    public String toString() {
      return "annotate " + content.name() + " " + key + "=" + value;
    }
  }

  /** The content is deleted. */
  record DeleteContent(String name) implements Step {
    @Override
    public String toString() {
      return "delete " + name;
    }
  }

  /** An event on {@code target}. */
  record Event(Target target, String uid, String type, String reason, String message)
      implements Step {
    @Override
    public String toString() {
      return type + " event " + reason + " on " + target + ": " + message;
    }
  }

  /** The snapshot {@code namespace/name} is looked at again now. */
  record LookAgain(String snapshotKey) implements Step {
    @Override
    public String toString() {
      return "look again at VolumeSnapshot " + snapshotKey;
    }
  }

  /** {@code step}, whose failure is told by {@code told} and ends nothing. */
  record Tolerant(Step step, Event told) implements Step {
    @Override
    public String toString() {
      return step + " (a failure told as " + told.reason() + ")";
    }
  }

  /** The sync failed: the key is looked at again after a backoff. */
  record Retry(String why) implements Step {
    @Override
    public String toString() {
      return "retry: " + why;
    }
  }
}
