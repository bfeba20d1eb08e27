package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;

/** Snapshots as sent and as read back; the waits' ends that the real Cinder shows rarely. */
class SnapshotCallsTest {

  private static final String VOLUME = "d3f8598e-f663-4409-a781-d6c4f42ef6c8";
  private static final String SNAPSHOT = "8a4ce31b-c573-42d5-becf-1fb461b8222c";
  private static final Backoff QUICK =
      new Backoff(Duration.ofMillis(1), 1.0, Duration.ofMillis(2), Duration.ofSeconds(5));

  private final MockCloud cloud = new MockCloud();
  private OpenStackCinderClient client;

  @AfterEach
  void tearDown() throws Exception {
    if (client != null) {
      client.close();
    }
    cloud.close();
  }

  private OpenStackCinderClient client() {
    client = cloud.noauthClient();
    return client;
  }

  private RecordedRequest lastCinder() {
    return cloud.cinderRequests.get(cloud.cinderRequests.size() - 1);
  }

  /** The recorded snapshot with another status, as a GET answers it. */
  private static MockResponse withStatus(String status) {
    ObjectNode body = (ObjectNode) MockCloud.load("create-snapshot.json").get("body").deepCopy();
    ((ObjectNode) body.get("snapshot")).put("status", status);
    return MockCloud.status(200, body.toString());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "the server's 3.70: no force (refused from 3.66), 3.70, ",
    "3.66: no force, 3.66, ",
    "3.65: force (an in-use volume is refused without it), 3.65, true",
    "3.0: force, 3.0, true",
  })
  void aSnapshotIsTakenWithForceExactlyBelow366(String name, String server, Boolean force)
      throws Exception {
    cloud.maxVersion(server);
    cloud.thenCinder(MockCloud.recorded("create-snapshot.json"));
    Snapshot s =
        client()
            .createSnapshot(
                new SnapshotSpec("snapcontent-1", VOLUME, "for default/db", Map.of("k", "v")));
    assertThat(s.id()).isEqualTo(SNAPSHOT);
    assertThat(s.status()).isEqualTo("creating");
    assertThat(s.createdAt()).isEqualTo(Instant.parse("2026-11-22T03:04:07.301643Z"));
    RecordedRequest r = lastCinder();
    assertThat(r.getPath()).isEqualTo("/volume/v3/" + MockCloud.PROJECT + "/snapshots");
    ObjectNode expected =
        (ObjectNode)
            MockCloud.JSON.readTree(
                "{\"snapshot\":{\"volume_id\":\""
                    + VOLUME
                    + "\",\"name\":\"snapcontent-1\",\"description\":\"for default/db\","
                    + "\"metadata\":{\"k\":\"v\"}}}");
    if (force != null) {
      ((ObjectNode) expected.get("snapshot")).put("force", true);
    }
    assertThat(MockCloud.JSON.readTree(r.getBody().readUtf8())).isEqualTo(expected);
  }

  @Test
  void aLookupSendsNameAndMetadataAndReadsWhatCinderListed() throws Exception {
    cloud.thenCinder(MockCloud.recorded("list-snapshots.json"));
    List<Snapshot> found = client().findSnapshots("snap-1", Map.of("lab-run", "file"));
    RecordedRequest r = lastCinder();
    assertThat(r.getRequestUrl().encodedPath()).endsWith("/snapshots/detail");
    assertThat(r.getRequestUrl().queryParameter("name")).isEqualTo("snap-1");
    assertThat(MockCloud.JSON.readTree(r.getRequestUrl().queryParameter("metadata")))
        .isEqualTo(MockCloud.JSON.readTree("{\"lab-run\":\"file\"}"));
    assertThat(found)
        .containsExactly(
            new Snapshot(
                "867a071c-f1f9-45be-922d-4d72e460c0cf",
                "snap-1",
                "381e4427-2dc0-440f-b118-8ece52e2932a",
                "available",
                1,
                Map.of("lab-run", "file"),
                Instant.parse("2026-11-22T03:29:07.931003Z")));
  }

  @Test
  void aSnapshotThatFailsIsAnErrorNotAWaitToTheDeadline() {
    cloud.thenCinder(withStatus("creating")).thenCinder(withStatus("error"));
    assertThatThrownBy(
            () -> client().awaitSnapshotStatus(SNAPSHOT, java.util.Set.of("available"), QUICK))
        .isInstanceOf(CinderException.UnexpectedState.class)
        .hasMessageContaining("went to status error");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "gone: deleted, deleting 404, ",
    "error_deleting: reported, deleting error_deleting, failed to delete (status error_deleting)",
    "available again: its backend keeps it, deleting available,"
        + " is available again after its deletion",
  })
  void aDeletionEnds(String name, String answers, String error) {
    for (String a : answers.split(" ")) {
      cloud.thenCinder(
          a.equals("404") ? MockCloud.recorded("error-unknown-volume.json") : withStatus(a));
    }
    OpenStackCinderClient c = client();
    if (error == null) {
      c.awaitSnapshotDeleted(SNAPSHOT, QUICK);
      assertThat(cloud.cinderRequests).hasSize(2);
    } else {
      assertThatThrownBy(() -> c.awaitSnapshotDeleted(SNAPSHOT, QUICK))
          .isInstanceOf(CinderException.UnexpectedState.class)
          .hasMessageContaining(error);
    }
  }

  @Test
  void deletingASnapshotThatIsGoneIsNoError() {
    cloud.thenCinder(MockCloud.recorded("error-unknown-volume.json"));
    client().deleteSnapshot(SNAPSHOT);
    assertThat(lastCinder().getMethod()).isEqualTo("DELETE");
  }

  @Test
  void metadataIsMergedByAPostNotReplacedByAPut() throws Exception {
    cloud.thenCinder(MockCloud.status(200, "{\"metadata\": {\"k\": \"v\", \"admin\": \"x\"}}"));
    client().updateSnapshotMetadata(SNAPSHOT, Map.of("k", "v"));
    RecordedRequest r = lastCinder();
    assertThat(r.getMethod()).isEqualTo("POST");
    assertThat(r.getPath()).endsWith("/snapshots/" + SNAPSHOT + "/metadata");
    assertThat(MockCloud.JSON.readTree(r.getBody().readUtf8()).get("metadata").get("k").asText())
        .isEqualTo("v");
  }
}
