package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WorkQueueTest {

  private final WorkQueue<String> queue = new WorkQueue<>(k -> k.substring(0, k.indexOf('/')));

  @AfterEach
  void shutDown() {
    queue.shutDown();
  }

  static Stream<Arguments> turns() {
    return Stream.of(
        Arguments.of(
            "one namespace: first in, first out", List.of("a/1", "a/2", "a/3"), "a/1 a/2 a/3"),
        Arguments.of(
            "a tenant's thousand keys delay another's by one",
            Stream.concat(
                    Stream.iterate(0, i -> i + 1).limit(1000).map(i -> "crowd/" + i),
                    Stream.of("quiet/plain"))
                .toList(),
            "crowd/0 quiet/plain crowd/1"),
        Arguments.of(
            "three namespaces take turns",
            List.of("a/1", "a/2", "a/3", "b/1", "b/2", "c/1"),
            "a/1 b/1 c/1 a/2 b/2 a/3"),
        Arguments.of(
            "a key waits once however often it is added",
            List.of("a/1", "a/1", "b/1", "a/1"),
            "a/1 b/1"),
        Arguments.of(
            "a namespace that emptied joins at the back again",
            List.of("a/1", "b/1", "b/2", "c/1"),
            "a/1 b/1 c/1 b/2"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("turns")
  void keysAreHandedOutInTurnsByNamespace(String name, List<String> added, String firstOut)
      throws InterruptedException {
    added.forEach(queue::add);
    int want = firstOut.split(" ").length;
    List<String> out = new ArrayList<>();
    for (int i = 0; i < want; i++) {
      String key = queue.take();
      out.add(key);
      queue.done(key);
    }
    assertThat(String.join(" ", out)).isEqualTo(firstOut);
    assertThat(queue.size()).isEqualTo(new java.util.HashSet<>(added).size() - want);
  }

  @Test
  void aKeyAddedWhileWorkedOnComesBackOnceWhenDone() throws InterruptedException {
    queue.add("a/1");
    String key = queue.take();
    queue.add("a/1");
    queue.add("a/1");
    assertThat(queue.size()).as("not handed to a second worker meanwhile").isZero();
    queue.done(key);
    assertThat(queue.size()).isOne();
    assertThat(queue.take()).isEqualTo("a/1");
  }

  static Stream<Arguments> delays() {
    return Stream.of(
        Arguments.of(
            "a later delay is dropped for the earlier one pending", List.of(30L, 600_000L)),
        Arguments.of("an earlier delay replaces the later one pending", List.of(600_000L, 30L)),
        Arguments.of(
            "a thousand retries of one key are one timer",
            Stream.concat(Stream.generate(() -> 600_000L).limit(1000), Stream.of(30L)).toList()));
  }

  /**
   * However often one key is added after a delay, one delayed add is pending, the earliest: the key
   * comes when that is due, once, and nothing stays pending after it.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("delays")
  @org.junit.jupiter.api.Timeout(30)
  void aKeyHasOneDelayedAddPendingTheEarliest(String name, List<Long> delaysMillis)
      throws InterruptedException {
    delaysMillis.forEach(d -> queue.addAfter("a/1", java.time.Duration.ofMillis(d)));
    assertThat(queue.pending()).as("timers pending").isOne();
    long t0 = System.nanoTime();
    String key = queue.take();
    assertThat(key).isEqualTo("a/1");
    assertThat((System.nanoTime() - t0) / 1_000_000).as("ms until it came").isLessThan(10_000);
    queue.done(key);
    assertThat(queue.scheduled("a/1")).as("still scheduled").isFalse();
    assertThat(queue.pending()).isZero();
    assertThat(queue.size()).isZero();
  }

  /** A look that took what its key waited for drops the key's delayed add: no timer is left. */
  @org.junit.jupiter.api.Test
  void anUnscheduledKeyLeavesNoTimerAndDoesNotCome() throws InterruptedException {
    queue.addAfter("a/1", java.time.Duration.ofMillis(50));
    queue.unschedule("a/1");
    queue.unschedule("a/never-scheduled");
    assertThat(queue.scheduled("a/1")).isFalse();
    assertThat(queue.pending()).isZero();
    Thread.sleep(200);
    assertThat(queue.size()).as("it never came").isZero();
  }
}
