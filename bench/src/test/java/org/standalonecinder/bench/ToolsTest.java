package org.standalonecinder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What wrk and openssl s_time print, as this machine's versions print it. */
class ToolsTest {

  static final String WRK =
      """
      Running 5s test @ https://127.0.0.1:18443/validate
        1 threads and 50 connections
        Thread Stats   Avg      Stdev     Max   +/- Stdev
          Latency   406.07us  787.65us  30.07ms   98.94%
          Req/Sec   100.37k    11.72k  110.61k    84.00%
        Latency Distribution
           50%  383.00us
           75%  419.00us
           90%  456.00us
           99%    1.26ms
        499205 requests in 5.00s, 120.45MB read
        Non-2xx or 3xx responses: 7
      Requests/sec:  99796.09
      Transfer/sec:     24.08MB
      """;

  @Test
  void wrkRatesAndPercentilesInMilliseconds() {
    Tools.Load l = Tools.parseWrk(WRK);
    assertThat(l.requestsPerSecond()).isEqualTo(99796.09);
    assertThat(l.p50Ms()).isEqualTo(0.383);
    assertThat(l.p99Ms()).isEqualTo(1.26);
    assertThat(l.errors()).isEqualTo(7);
  }

  @Test
  void secondsAreMilliseconds() {
    Tools.Load l = Tools.parseWrk(WRK.replace("1.26ms", "1.50s"));
    assertThat(l.p99Ms()).isEqualTo(1500.0);
  }

  @Test
  void aRunWithoutARateIsAnError() {
    assertThatThrownBy(() -> Tools.parseWrk("unable to connect to 127.0.0.1:1 Connection refused"))
        .hasMessageContaining("wrk printed no rate");
  }

  @Test
  void handshakesPerRealSecond() {
    assertThat(
            Tools.parseSTime(
                "2777 connections in 1.84s; 1509.24 connections/user sec, bytes read 0\n"
                    + "2777 connections in 4 real seconds, 0 bytes read per connection\n"))
        .isEqualTo(2777 / 4.0);
  }
}
