package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.CinderException;

/** What a call without an answer reports: the words end up in the claim's events. */
class ErrorsTest {

  static Stream<Arguments> transportFailures() {
    return Stream.of(
        Arguments.of(
            "cinder-api not running",
            new ConnectException("Connection refused"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: connection refused (is cinder-api running"
                + " and is the endpoint right?)"),
        Arguments.of(
            "answer cut short (okio's words)",
            new IOException("unexpected", new EOFException("\n not found: limit=0 content=…")),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: the connection was closed before the"
                + " answer came"),
        Arguments.of(
            "socket closed",
            new SocketException("Socket closed"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: the connection was closed before the"
                + " answer came"),
        Arguments.of(
            "read timeout",
            new SocketTimeoutException("Read timed out"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: timed out"),
        Arguments.of(
            "OkHttp's call timeout",
            new InterruptedIOException("timeout"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: timed out"),
        Arguments.of(
            "OkHttp's call timeout, which closes the socket under the read",
            new InterruptedIOException("timeout").initCause(new SocketException("Socket closed")),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: timed out"),
        Arguments.of(
            "unknown host",
            new UnknownHostException("cinder.example"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: unknown host cinder.example"),
        Arguments.of(
            "anything else keeps its own words",
            new IOException("stream was reset: PROTOCOL_ERROR"),
            CinderException.Unavailable.class,
            "create volume pvc-1: no answer from Cinder: stream was reset: PROTOCOL_ERROR"),
        Arguments.of(
            "TLS is configuration",
            new IOException(new SSLHandshakeException("PKIX path building failed")),
            CinderException.Misconfigured.class,
            "create volume pvc-1: TLS failed (PKIX path building failed); set ca-file to the CA"
                + " that signed the server's certificate"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transportFailures")
  void aCallWithoutAnAnswerSaysWhy(String name, Throwable cause, Class<?> type, String expected) {
    CinderException e = Errors.fromTransport("create volume pvc-1", cause);
    assertThat(e).isInstanceOf(type);
    assertThat(e.getMessage()).isEqualTo(expected);
  }
}
