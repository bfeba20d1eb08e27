package org.standalonecinder.api.settings;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.status.NopStatusListener;
import java.util.Locale;
import java.util.Map;

/**
 * Both programs' logging, set up in code from {@code LOG_FORMAT} and {@code LOG_LEVEL} (found by
 * logback through the service loader): standard error, as one readable line ({@code text}, the
 * default) or one JSON object a line ({@code json}), the MDC (claim, pv, volume of the item a
 * worker is on) in either. In code rather than a logback.xml: logback's XML configuration loads
 * about 250 classes of its own into every start. A {@code logback.xml} or {@code logback-test.xml}
 * on the class path (the tests', the demo's) still wins.
 */
public final class LogConfigurator extends ContextAwareBase implements Configurator {

  // A message is one line: a value a client wrote (a review's uid, say) that holds a line break
  // would otherwise start a line of its own, a forged entry in the log. JSON escapes it by itself.
  static final String PATTERN =
      "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} -%replace( [%mdc]){' \\[\\]', ''}"
          + " %replace(%msg){'[\\r\\n\\u000b\\u000c\\u0085\\u2028\\u2029]', '\\\\n'}%n";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    ClassLoader loader = LogConfigurator.class.getClassLoader();
    if (loader.getResource("logback-test.xml") != null
        || loader.getResource("logback.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    configure(context, System.getenv());
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /**
   * Sets up {@code context} for these variables. A value {@link LogSettings} refuses falls back to
   * the default (text, INFO): the programs stop on it before they log anything.
   */
  public static void configure(LoggerContext context, Map<String, String> env) {
    // Logback's own notes stay out of the log.
    context.getStatusManager().add(new NopStatusListener());
    String format = env.getOrDefault("LOG_FORMAT", "").trim();
    Encoder<ILoggingEvent> encoder = "json".equals(format) ? json(context) : text(context);
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(context);
    appender.setName("json".equals(format) ? "json" : "text");
    appender.setTarget("System.err"); // stdout stays the commands' output
    appender.setEncoder(encoder);
    appender.start();
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    root.addAppender(appender);
    root.setLevel(
        Level.toLevel(
            env.getOrDefault("LOG_LEVEL", "").trim().toUpperCase(Locale.ROOT), Level.INFO));
    // openstack4j logs every request at INFO.
    context.getLogger("org.openstack4j").setLevel(Level.WARN);
  }

  private static Encoder<ILoggingEvent> text(LoggerContext context) {
    PatternLayoutEncoder e = new PatternLayoutEncoder();
    e.setContext(context);
    e.setPattern(PATTERN);
    e.start();
    return e;
  }

  private static Encoder<ILoggingEvent> json(LoggerContext context) {
    JsonEncoder e = new JsonEncoder();
    e.setContext(context);
    e.setWithSequenceNumber(false);
    e.setWithNanoseconds(false);
    e.setWithContext(false);
    e.setWithFormattedMessage(true);
    e.setWithMessage(false);
    e.setWithArguments(false);
    e.start();
    return e;
  }
}
