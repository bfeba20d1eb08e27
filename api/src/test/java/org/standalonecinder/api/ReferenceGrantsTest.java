package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** Which ReferenceGrants let claims of namespace {@code apps} clone the claim {@code db}. */
class ReferenceGrantsTest {

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> specs(String yaml) {
    Object o = new Load(LoadSettings.builder().build()).loadFromString(yaml);
    return o == null ? List.of() : (List<Map<String, Object>>) o;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "every claim to apps | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: apps}],"
            + " to: [{group: '', kind: PersistentVolumeClaim}]}] | true",
        "db by name | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: apps}],"
            + " to: [{group: '', kind: PersistentVolumeClaim, name: db}]}] | true",
        "an empty name is every claim | [{from: [{group: '', kind: PersistentVolumeClaim,"
            + " namespace: apps}], to: [{group: '', kind: PersistentVolumeClaim, name: ''}]}] | true",
        "one of several entries | [{from: [{group: '', kind: Pod, namespace: apps}, {group: '',"
            + " kind: PersistentVolumeClaim, namespace: apps}], to: [{group: '', kind: Secret},"
            + " {group: '', kind: PersistentVolumeClaim, name: db}]}] | true",
        "another claim by name | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: PersistentVolumeClaim, name: other}]}] | false",
        "another namespace | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: web}],"
            + " to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "Gateways of apps, not claims | [{from: [{group: gateway.networking.k8s.io, kind:"
            + " Gateway, namespace: apps}], to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "claims of apps to Secrets | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: Secret}]}] | false",
        "a claim kind of another group | [{from: [{group: '', kind: PersistentVolumeClaim,"
            + " namespace: apps}], to: [{group: example.com, kind: PersistentVolumeClaim}]}] | false",
        "from and to in two grants | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: Secret}]}, {from: [{group: '', kind: Pod, namespace:"
            + " apps}], to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "no from | [{to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "from is not a list | [{from: apps, to: [{group: '', kind: PersistentVolumeClaim}]}] |"
            + " false",
        "entries that are not maps | [{from: [apps], to: [db]}] | false",
        "no grants | [] | false",
      })
  void aGrantAllowsExactlyWhatItNames(String name, String yaml, boolean allows) {
    assertThat(ReferenceGrants.allowClaim(specs(yaml), "apps", "db")).isEqualTo(allows);
  }

  /**
   * The attack: a namespace's owner writes hundreds of grants (each may carry 256 KiB of
   * annotations) to make every clone from it read them all. They are read a page at a time, the
   * reading stops at the first page that grants, and after 10 pages.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "the grant on the first page: one page read, 1, 1, true",
    "the grant on page 3: three read, 3, 3, true",
    "the grant on page 10: ten read, 10, 10, true",
    "the grant on page 11: never read, 11, 10, false",
    "no grant in 50 pages: ten read, 0, 10, false",
  })
  void grantsAreReadAPageAtATimeAndNoMoreThanTenPages(
      String name, int grantingPage, int read, boolean allows) {
    java.util.concurrent.atomic.AtomicInteger pages =
        new java.util.concurrent.atomic.AtomicInteger();
    List<Map<String, Object>> other =
        specs(
            "[{from: [{group: '', kind: PersistentVolumeClaim, namespace: web}], to: [{group: '',"
                + " kind: PersistentVolumeClaim}]}]");
    List<Map<String, Object>> granting =
        specs(
            "[{from: [{group: '', kind: PersistentVolumeClaim, namespace: apps}], to: [{group:"
                + " '', kind: PersistentVolumeClaim}]}]");
    boolean got =
        ReferenceGrants.allowClaim(
            next -> {
              int page = pages.incrementAndGet();
              assertThat(next).isEqualTo(page == 1 ? null : "after-" + (page - 1));
              return new ReferenceGrants.Page(
                  page == grantingPage ? granting : other, page < 50 ? "after-" + page : null);
            },
            "apps",
            "db");
    assertThat(got).isEqualTo(allows);
    assertThat(pages.get()).as("pages read").isEqualTo(read);
  }
}
