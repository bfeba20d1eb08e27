package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@code events.k8s.io/v1} Events about claims and volumes (fabric8 has no recorder). An
 * Event that cannot be written is logged, never thrown: events inform, they do not decide.
 *
 * <p>An event told again about the same object with the same reason and note within {@link #QUIET}
 * is not written: it is counted, and the first repeat after the quiet time is written as a series
 * with that count, as Kubernetes' own recorders do. So a claim that fails the same way at every
 * resync costs the API server one write per quiet time, not one per resync; a tenant with thousands
 * of such claims cannot turn the provisioner into an event flood.
 */
public class EventRecorder {

  /** Event reasons, as users and alerts see them. */
  public static final String PROVISIONING = "Provisioning";

  public static final String PROVISIONING_SUCCEEDED = "ProvisioningSucceeded";
  public static final String PROVISIONING_FAILED = "ProvisioningFailed";
  public static final String VOLUME_FAILED_DELETE = "VolumeFailedDelete";
  public static final String VOLUME_DELETED = "VolumeDeleted";
  public static final String VOLUME_DELETING = "VolumeDeleting";

  /** A released PV of this provisioner's name that another instance made: left alone. */
  public static final String VOLUME_NOT_MINE = "VolumeNotMine";

  /** Where Events about cluster-scoped objects (PVs) are written. */
  public static final String CLUSTER_SCOPED_EVENTS = "kube-system";

  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final int MAX_NOTE = 1024;
  private static final DateTimeFormatter MICRO =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
          .withZone(java.time.ZoneOffset.UTC);

  /** How long an identical event is not written again. */
  static final java.time.Duration QUIET = java.time.Duration.ofMinutes(10);

  // Enough for every claim a tenant flood leaves failing; each entry is under 200 bytes.
  private static final int REMEMBERED = 16_384;

  private final KubernetesClient client;
  private final String controller;
  private final String instance;
  private final Clock clock;

  public EventRecorder(KubernetesClient client, String controller, String instance, Clock clock) {
    this.client = client;
    this.controller = controller;
    this.instance = instance;
    this.clock = clock;
  }

  public void normal(HasMetadata about, String reason, String note) {
    record(about, "Normal", reason, note);
  }

  /**
   * Tells a warning; returns false when it is a repeat within the quiet time, not written (what a
   * caller may then log quietly too).
   */
  public boolean warning(HasMetadata about, String reason, String note) {
    return record(about, "Warning", reason, note);
  }

  private final java.util.concurrent.atomic.AtomicLong lastNanos =
      new java.util.concurrent.atomic.AtomicLong();

  /** The clock in nanoseconds, never the same twice in this recorder. */
  private long uniqueNanos() {
    java.time.Instant t = clock.instant();
    long now = t.getEpochSecond() * 1_000_000_000L + t.getNano();
    return lastNanos.updateAndGet(last -> Math.max(last + 1, now));
  }

  /**
   * An event's name as Kubernetes' own recorders make it: the object's name, a dot, the time in hex
   * nanoseconds. A generateName of {@code name.} is what the API server refuses (a name may not end
   * in a dot, and the suffix it adds is checked after), and the whole must stay a DNS subdomain of
   * at most 253 characters.
   */
  static String name(String objectName, long nanos) {
    String suffix = "." + Long.toHexString(nanos);
    String base =
        objectName.length() + suffix.length() > 253
            ? objectName.substring(0, 253 - suffix.length())
            : objectName;
    // A cut may leave a dot or a dash at the end, which a subdomain label may not have.
    while (base.endsWith(".") || base.endsWith("-")) {
      base = base.substring(0, base.length() - 1);
    }
    return base + suffix;
  }

  /**
   * The note cut to what the API server takes: at most {@value #MAX_NOTE} bytes of UTF-8 (it counts
   * bytes, not characters), never in the middle of a character.
   */
  static String fit(String note) {
    byte[] utf8 = note.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (utf8.length <= MAX_NOTE) {
      return note;
    }
    int end = MAX_NOTE - 3;
    while (end > 0 && (utf8[end] & 0xC0) == 0x80) {
      end--; // a continuation byte: the character started before
    }
    return new String(utf8, 0, end, java.nio.charset.StandardCharsets.UTF_8) + "...";
  }

  /** An event as told, by the object it is about; the note by a 64-bit digest. */
  private record Told(String about, String type, String reason, long note) {}

  /** When an event was last written and how often it was told since. */
  private static final class Seen {
    java.time.Instant written;
    int total = 1;

    Seen(java.time.Instant written) {
      this.written = written;
    }
  }

  private final Map<Told, Seen> seen =
      new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Told, Seen> eldest) {
          return size() > REMEMBERED;
        }
      };

  /**
   * Whether the event is to be written now: 0 when not (told within the quiet time), 1 for a first,
   * else how often it was told in all (a series).
   */
  private int count(HasMetadata about, String type, String reason, String note) {
    String who =
        about.getMetadata().getUid() != null
            ? about.getMetadata().getUid()
            : about.getKind()
                + "/"
                + about.getMetadata().getNamespace()
                + "/"
                + about.getMetadata().getName();
    Told told = new Told(who, type, reason, digest(note));
    java.time.Instant now = clock.instant();
    synchronized (seen) {
      Seen s = seen.get(told);
      if (s == null) {
        seen.put(told, new Seen(now));
        return 1;
      }
      s.total++;
      if (now.isBefore(s.written.plus(QUIET))) {
        return 0;
      }
      s.written = now;
      return s.total;
    }
  }

  private static long digest(String note) {
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(note.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return (crc.getValue() << 32) ^ (note.hashCode() & 0xffffffffL);
  }

  private boolean record(HasMetadata about, String type, String reason, String note) {
    int count = count(about, type, reason, note);
    if (count == 0) {
      return false;
    }
    String ns = about.getMetadata().getNamespace();
    // Events about cluster-scoped objects (PVs) go to kube-system: an API server before 1.22
    // refuses an events.k8s.io Event about one anywhere else (422, "involvedObject.namespace ...
    // does not match event.namespace"), later ones take default too. kubectl describe finds
    // them in any namespace.
    String eventNs = ns == null ? CLUSTER_SCOPED_EVENTS : ns;
    String text = fit(note);
    MicroTime now = new MicroTime(MICRO.format(clock.instant().truncatedTo(ChronoUnit.MICROS)));
    EventBuilder e =
        new EventBuilder()
            .withNewMetadata()
            .withName(name(about.getMetadata().getName(), uniqueNanos()))
            .withNamespace(eventNs)
            .endMetadata()
            .withEventTime(now)
            .withReportingController(controller)
            .withReportingInstance(instance)
            .withAction(reason)
            .withReason(reason)
            .withType(type)
            .withNote(text)
            .withRegarding(
                new ObjectReferenceBuilder()
                    .withApiVersion(about.getApiVersion())
                    .withKind(about.getKind())
                    .withNamespace(ns)
                    .withName(about.getMetadata().getName())
                    .withUid(about.getMetadata().getUid())
                    .withResourceVersion(about.getMetadata().getResourceVersion())
                    .build());
    if (count > 1) {
      e.withNewSeries().withCount(count).withLastObservedTime(now).endSeries();
    }
    try {
      client.events().v1().events().inNamespace(eventNs).resource(e.build()).create();
    } catch (RuntimeException ex) {
      LOG.warn(
          "cannot record event {} on {}/{}: {}",
          reason,
          about.getKind(),
          about.getMetadata().getName(),
          ex.getMessage());
    }
    return true;
  }
}
