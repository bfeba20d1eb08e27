package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.Pool;

/** The pools table: numbers, "infinite", "unknown", a missing ratio, no pool at all. */
class PoolsCommandTest {

  @Test
  void everyKindOfCapacityHasItsColumn() {
    List<String> lines =
        PoolsCommand.format(
            List.of(
                new Pool(
                    "cinder-local@file#file",
                    "file",
                    "iSCSI",
                    new Capacity.Gib(100),
                    new Capacity.Gib(77.14),
                    new Capacity.Gib(4),
                    new Capacity.Gib(4),
                    20.0),
                new Pool(
                    "h@fake#fake",
                    "fake",
                    "fake",
                    new Capacity.Infinite(),
                    new Capacity.Infinite(),
                    new Capacity.Gib(0),
                    new Capacity.Unknown(),
                    null)));
    assertThat(lines)
        .containsExactly(
            "POOL                    PROTOCOL       TOTAL       FREE  ALLOCATED  PROVISIONED  OVERSUB  FREE%",
            "cinder-local@file#file     iSCSI  100.00 GiB  77.14 GiB   4.00 GiB     4.00 GiB     20.0    77%",
            "h@fake#fake                 fake    infinite   infinite   0.00 GiB      unknown        -      -");
  }

  @Test
  void noPoolSaysWhy() {
    assertThat(PoolsCommand.format(List.of()))
        .last()
        .isEqualTo("(Cinder reports no pool: is a cinder-volume service up?)");
  }
}
