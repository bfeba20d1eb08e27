package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.VolumeSpec;

/**
 * Backups as sent and as read back (transcripts recorded on dev/cinder-local's cinder-backup); the
 * ends of a wait that the real Cinder shows rarely.
 */
class BackupCallsTest {

  private static final String VOLUME = "78b04a75-612b-4356-a050-55a372f26bc9";
  private static final String BACKUP = "35486a20-c1a9-48ad-98f2-914e945fe57e";
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

  private RecordedRequest cinder(int i) {
    return cloud.cinderRequests.get(i);
  }

  /** The recorded backup with another status (and reason), as a GET answers it. */
  private static MockResponse withStatus(String status, String reason) {
    ObjectNode body = (ObjectNode) MockCloud.load("get-backup.json").get("body").deepCopy();
    ((ObjectNode) body.get("backup")).put("status", status).put("fail_reason", reason);
    return MockCloud.status(200, body.toString());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "the server's 3.70: with its metadata, 3.70, true",
    "3.43: with its metadata, 3.43, true",
    "3.42: without (Cinder would refuse the key), 3.42, false",
  })
  void aBackupIsMadeWithForceAndItsMetadataFrom343ThenReadBack(
      String name, String server, boolean metadata) throws Exception {
    cloud.maxVersion(server);
    cloud.thenCinder(MockCloud.recorded("create-backup.json"));
    cloud.thenCinder(MockCloud.recorded("get-backup.json"));
    Backup b =
        client()
            .createBackup(
                new BackupSpec("snapcontent-1", VOLUME, "for default/db", Map.of("k", "v")));
    assertThat(b.id()).isEqualTo(BACKUP);
    assertThat(b.status()).as("read back: the answer holds the id alone").isEqualTo("creating");
    assertThat(b.volumeId()).isEqualTo(VOLUME);
    assertThat(b.sizeGib()).isEqualTo(1);
    RecordedRequest post = cinder(cloud.cinderRequests.size() - 2);
    assertThat(post.getPath()).isEqualTo("/volume/v3/" + MockCloud.PROJECT + "/backups");
    JsonNode sent = MockCloud.JSON.readTree(post.getBody().readUtf8()).get("backup");
    assertThat(sent.get("volume_id").asText()).isEqualTo(VOLUME);
    assertThat(sent.get("name").asText()).isEqualTo("snapcontent-1");
    assertThat(sent.get("force").asBoolean()).as("an in-use volume needs it").isTrue();
    assertThat(sent.has("metadata")).isEqualTo(metadata);
    assertThat(cinder(cloud.cinderRequests.size() - 1).getPath()).endsWith("/backups/" + BACKUP);
  }

  @Test
  void aLookupSendsTheNameAloneAndComparesTheMetadataItself() {
    cloud.thenCinder(MockCloud.recorded("list-backups.json"));
    List<Backup> found = client().findBackups("bk-1", Map.of("lab", "yes"));
    RecordedRequest r = cinder(cloud.cinderRequests.size() - 1);
    assertThat(r.getRequestUrl().encodedPath()).endsWith("/backups/detail");
    assertThat(r.getRequestUrl().queryParameter("name")).isEqualTo("bk-1");
    assertThat(r.getRequestUrl().queryParameter("metadata"))
        .as("refused to users who are not admins")
        .isNull();
    assertThat(found).extracting(Backup::metadata).allMatch(m -> "yes".equals(m.get("lab")));
    assertThat(found).hasSize(1);
    assertThat(found.get(0).createdAt()).isNotNull().isBefore(Instant.now());
  }

  @Test
  void aBackupThatFailsIsAnErrorWithCinderReasonNotAWaitToTheDeadline() {
    cloud
        .thenCinder(withStatus("creating", null))
        .thenCinder(withStatus("error", "Volume device not found at ."));
    assertThatThrownBy(() -> client().awaitBackupStatus(BACKUP, Set.of("available"), QUICK))
        .isInstanceOf(CinderException.UnexpectedState.class)
        .hasMessageContaining("went to status error")
        .hasMessageContaining("Volume device not found at .");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "gone: deleted, deleting 404, ",
    "error_deleting: reported, deleting error_deleting, failed to delete (status error_deleting)",
  })
  void aDeletionEnds(String name, String answers, String error) {
    for (String a : answers.split(" ")) {
      cloud.thenCinder(
          a.equals("404") ? MockCloud.recorded("error-unknown-volume.json") : withStatus(a, null));
    }
    OpenStackCinderClient c = client();
    if (error == null) {
      c.awaitBackupDeleted(BACKUP, QUICK);
      assertThat(cloud.cinderRequests).hasSize(2);
    } else {
      assertThatThrownBy(() -> c.awaitBackupDeleted(BACKUP, QUICK))
          .isInstanceOf(CinderException.UnexpectedState.class)
          .hasMessageContaining(error);
    }
  }

  @Test
  void deletingABackupThatIsGoneIsNoError() {
    cloud.thenCinder(MockCloud.recorded("error-unknown-volume.json"));
    client().deleteBackup(BACKUP);
    assertThat(cinder(0).getMethod()).isEqualTo("DELETE");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "3.47: backup_id sent, 3.47, true",
    "3.46: refused here (an older Cinder ignores backup_id and makes a blank volume), 3.46, false",
  })
  void aVolumeIsMadeFromABackupOnlyWhereCinderReadsBackupId(
      String name, String server, boolean sent) throws Exception {
    cloud.maxVersion(server);
    cloud.thenCinder(MockCloud.recorded("create-volume.json"));
    VolumeSpec spec = VolumeSpec.blank("pvc-1", 2).fromBackup(BACKUP);
    if (sent) {
      client().createVolume(spec);
      JsonNode body = MockCloud.JSON.readTree(cinder(0).getBody().readUtf8()).get("volume");
      assertThat(body.get("backup_id").asText()).isEqualTo(BACKUP);
    } else {
      assertThatThrownBy(() -> client().createVolume(spec))
          .isInstanceOf(CinderException.Unsupported.class)
          .hasMessageContaining("from 3.47 on");
      assertThat(cloud.cinderRequests).as("nothing asked of Cinder").isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "3.43: read then written whole (Cinder replaces a backup's metadata), 3.43, true",
    "3.42: refused here (Cinder keeps no backup metadata below 3.43), 3.42, false",
  })
  void aBackupsMetadataIsMergedWithWhatItHas(String name, String server, boolean written)
      throws Exception {
    cloud.maxVersion(server);
    cloud.thenCinder(MockCloud.recorded("get-backup.json"));
    cloud.thenCinder(MockCloud.recorded("get-backup.json"));
    Map<String, String> entry = Map.of("standalone-cinder.io/deletion-policy", "Retain");
    if (!written) {
      assertThatThrownBy(() -> client().updateBackupMetadata(BACKUP, entry))
          .isInstanceOf(CinderException.Unsupported.class)
          .hasMessageContaining("from microversion 3.43");
      assertThat(cloud.cinderRequests).as("nothing asked of Cinder").isEmpty();
      return;
    }
    client().updateBackupMetadata(BACKUP, entry);
    RecordedRequest put = cinder(1);
    assertThat(put.getMethod()).isEqualTo("PUT");
    assertThat(put.getPath()).endsWith("/backups/" + BACKUP);
    JsonNode sent = MockCloud.JSON.readTree(put.getBody().readUtf8());
    assertThat(sent.get("backup").get("metadata"))
        .isEqualTo(
            MockCloud.JSON.readTree(
                "{\"lab\":\"yes\",\"standalone-cinder.io/deletion-policy\":\"Retain\"}"));
    assertThat(sent.get("backup").size()).as("nothing but the metadata").isEqualTo(1);
  }

  @Test
  void anAnswerWithoutTheBackupsIdIsAnErrorNotAHalfReadBackup() {
    cloud.thenCinder(MockCloud.status(202, "{\"backup\":{\"name\":\"snapcontent-1\"}}"));
    assertThatThrownBy(
            () -> client().createBackup(new BackupSpec("snapcontent-1", VOLUME, null, Map.of())))
        .isInstanceOf(CinderException.Unavailable.class)
        .hasMessageContaining("the answer has no 'id'");
    assertThat(cloud.cinderRequests).as("nothing read back").hasSize(1);
  }
}
