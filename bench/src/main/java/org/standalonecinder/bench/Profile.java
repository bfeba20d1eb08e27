package org.standalonecinder.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a server's CPU went, from its Flight Recorder samples: the share of samples by the part of
 * the stack they were taken in (the first frame from the top that belongs to one of the libraries
 * or layers named here; the JDK's own frames are looked through, so a HashMap call made by Jackson
 * counts as Jackson's), and the methods most samples were taken in.
 */
final class Profile {

  /** The parts, by package prefix, in the order they are looked for from the top of a stack. */
  private static final List<String[]> PARTS =
      List.of(
          new String[] {"the rules", "org.standalonecinder.webhook.policy."},
          new String[] {"admission (metrics, decision)", "org.standalonecinder.webhook.admission."},
          new String[] {"the webhook's HTTP layer", "org.standalonecinder.webhook.http."},
          new String[] {"fabric8 model", "io.fabric8."},
          new String[] {"Jackson", "com.fasterxml.jackson."},
          new String[] {"logging", "ch.qos.logback."},
          new String[] {"metrics", "io.micrometer."},
          new String[] {"TLS (BoringSSL via netty-tcnative)", "io.netty.internal.tcnative."},
          new String[] {"TLS (netty's SSL handler)", "io.netty.handler.ssl."},
          new String[] {"Vert.x HTTP", "io.vertx.core.http."},
          new String[] {"Vert.x web", "io.vertx.ext.web."},
          new String[] {"Vert.x other", "io.vertx."},
          new String[] {"netty HTTP codec", "io.netty.handler.codec."},
          new String[] {"netty transport", "io.netty."});

  private Profile() {}

  /** Prints the breakdown of every recording in {@code dir}. */
  static void print(Path dir) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(f -> f.toString().endsWith(".jfr")).sorted().toList();
    }
    Map<String, Integer> byPart = new HashMap<>();
    Map<String, Integer> byMethod = new HashMap<>();
    int total = 0;
    for (Path f : files) {
      for (RecordedEvent e : RecordingFile.readAllEvents(f)) {
        if (!e.getEventType().getName().equals("jdk.ExecutionSample")
            || e.getStackTrace() == null) {
          continue;
        }
        List<RecordedFrame> frames = e.getStackTrace().getFrames();
        if (frames.isEmpty()) {
          continue;
        }
        total++;
        RecordedFrame top = frames.get(0);
        byMethod.merge(name(top), 1, Integer::sum);
        byPart.merge(part(frames), 1, Integer::sum);
      }
    }
    System.out.printf(
        "%nwebhook CPU samples (%d, from %d recordings in %s)%n", total, files.size(), dir);
    if (total == 0) {
      return;
    }
    final int all = total;
    System.out.println("  by the part of the stack a sample was taken in:");
    byPart.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .forEach(
            e -> System.out.printf("    %5.1f%%  %s%n", 100.0 * e.getValue() / all, e.getKey()));
    System.out.println("  the methods most samples were taken in:");
    byMethod.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .limit(15)
        .forEach(
            e -> System.out.printf("    %5.1f%%  %s%n", 100.0 * e.getValue() / all, e.getKey()));
  }

  private static String part(List<RecordedFrame> frames) {
    for (RecordedFrame f : frames) {
      String cls = f.getMethod().getType().getName();
      for (String[] p : PARTS) {
        if (cls.startsWith(p[1])) {
          return p[0];
        }
      }
    }
    // Only the JDK's own frames (the GC's and compiler's threads are not sampled): a thread
    // of the JDK's, such as the TLS handshake's key work on a JDK engine.
    return "the JDK alone";
  }

  private static String name(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }
}
