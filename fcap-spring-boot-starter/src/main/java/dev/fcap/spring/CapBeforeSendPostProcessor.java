package dev.fcap.spring;

import dev.fcap.client.Decision;
import dev.fcap.client.Defer;
import dev.fcap.client.Message;
import java.lang.reflect.Method;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.temporal.TemporalAccessor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Proxies the beans that have {@link CapBeforeSend} methods (the way Spring's own
 * {@code MethodValidationPostProcessor} does for {@code @Validated}): no AspectJ needed. The
 * {@link Fcap} bean is looked up at the first call, so this post-processor can be created early.
 */
final class CapBeforeSendPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private static final long serialVersionUID = 1L;

  CapBeforeSendPostProcessor(ObjectProvider<Fcap> fcap) {
    setProxyTargetClass(true);
    this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, CapBeforeSend.class, true),
        new Interceptor(fcap));
  }

  private static final class Interceptor implements MethodInterceptor {
    private final ObjectProvider<Fcap> fcap;
    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();
    private final Map<String, Expression> expressions = new ConcurrentHashMap<>();
    /** Per method, the positions of its {@link Decision} parameters (most have none). */
    private final Map<Method, int[]> decisionParameters = new ConcurrentHashMap<>();
    private static final Pattern NAMED_VARIABLE = Pattern.compile("#([A-Za-z_$][A-Za-z0-9_$]*)");
    private static final Pattern POSITIONAL = Pattern.compile("[pa]\\d+");

    Interceptor(ObjectProvider<Fcap> fcap) {
      this.fcap = fcap;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
      Method method = invocation.getMethod();
      CapBeforeSend cap = AnnotatedElementUtils.findMergedAnnotation(method, CapBeforeSend.class);
      if (cap == null) {
        return invocation.proceed();
      }
      requireParameterNames(method, cap);
      MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(invocation.getThis(), method,
          invocation.getArguments(), names);
      String recipient = eval(cap.recipient(), context);
      if (recipient == null) {
        throw new IllegalArgumentException("@CapBeforeSend on " + method + ": recipient '" + cap.recipient()
            + "' is null");
      }
      Message message = Message.builder(recipient).tenant(literal(cap.tenant())).channel(literal(cap.channel()))
          .sender(literal(cap.sender())).category(literal(cap.category())).content(eval(cap.content(), context))
          .contentKey(eval(cap.contentKey(), context)).timeZone(zone(cap, method, context))
          .priority(cap.priority()).defer(defer(cap, method, context)).build();
      Fcap f = fcap.getObject();
      Decision d = f.decide(message);
      int[] slots = decisionParameters.computeIfAbsent(method, Interceptor::decisionParameters);
      // a deferred decision is the method's to schedule only if it can receive it
      if (!d.allowed() && !(d.deferred() && slots.length > 0)) {
        throw new MessageCappedException(d);
      }
      for (int i : slots) {
        invocation.getArguments()[i] = d;
      }
      try {
        return invocation.proceed();
      } catch (Throwable t) {
        if (d.decisionId() != null) {
          f.release(d.decisionId());
        }
        throw t;
      }
    }

    /**
     * An expression such as {@code #phone} needs the parameter names in the class file, which only
     * {@code javac -parameters} writes; without them every such variable is null. Says what to change
     * instead of failing on the null.
     */
    private void requireParameterNames(Method method, CapBeforeSend cap) {
      if (method.getParameterCount() == 0 || names.getParameterNames(method) != null) {
        return;
      }
      for (String expression : new String[] {cap.recipient(), cap.content(), cap.contentKey(), cap.notAfter()}) {
        Matcher m = NAMED_VARIABLE.matcher(expression);
        while (m.find()) {
          if (!POSITIONAL.matcher(m.group(1)).matches() && !m.group(1).equals("root") && !m.group(1).equals("this")) {
            throw new IllegalStateException("@CapBeforeSend on " + method + ": '" + expression + "' names the parameter '"
                + m.group(1) + "', but " + method.getDeclaringClass().getName() + " was compiled without parameter "
                + "names. Compile with -parameters (Maven: <parameters>true</parameters> in the maven-compiler-plugin "
                + "configuration, as Spring Boot's parent pom sets it; Gradle: options.compilerArgs.add(\"-parameters\")"
                + "), or name arguments by position: #p0, #p1, ...");
          }
        }
      }
    }

    private String eval(String expression, MethodBasedEvaluationContext context) {
      if (expression.isEmpty()) {
        return null;
      }
      Object v = expressions.computeIfAbsent(expression, parser::parseExpression).getValue(context);
      return v == null ? null : v.toString();
    }

    private java.time.ZoneId zone(CapBeforeSend cap, Method method, MethodBasedEvaluationContext context) {
      if (cap.timeZone().isEmpty()) {
        return null;
      }
      Object v = expressions.computeIfAbsent(cap.timeZone(), parser::parseExpression).getValue(context);
      if (v == null || v instanceof java.time.ZoneId) {
        return (java.time.ZoneId) v;
      }
      try {
        return java.time.ZoneId.of(v.toString());
      } catch (java.time.DateTimeException e) {
        throw new IllegalArgumentException("@CapBeforeSend on " + method + ": timeZone '" + cap.timeZone()
            + "' is '" + v + "', not a time zone; give an IANA id such as America/New_York", e);
      }
    }

    private static int[] decisionParameters(Method method) {
      Class<?>[] types = method.getParameterTypes();
      return java.util.stream.IntStream.range(0, types.length).filter(i -> types[i] == Decision.class).toArray();
    }

    /** The message's deferral (null: none): {@code notAfter}'s value as an instant, or the default. */
    private Defer defer(CapBeforeSend cap, Method method, MethodBasedEvaluationContext context) {
      if (!cap.defer()) {
        if (!cap.notAfter().isEmpty()) {
          throw new IllegalStateException("@CapBeforeSend on " + method + ": notAfter '" + cap.notAfter()
              + "' needs defer = true");
        }
        return null;
      }
      if (cap.notAfter().isEmpty()) {
        return Defer.BY_DEFAULT;
      }
      Object v = expressions.computeIfAbsent(cap.notAfter(), parser::parseExpression).getValue(context);
      if (v == null) {
        return Defer.BY_DEFAULT;
      }
      try {
        Instant at = v instanceof Number n ? Instant.ofEpochMilli(n.longValue())
            : v instanceof TemporalAccessor t ? Instant.from(t) : Instant.parse(v.toString());
        return Defer.until(at);
      } catch (DateTimeException | IllegalArgumentException e) {
        throw new IllegalArgumentException("@CapBeforeSend on " + method + ": notAfter '" + cap.notAfter() + "' is '"
            + v + "', not an instant after 1970; give an Instant, epoch milliseconds or ISO-8601 text such as "
            + "2026-12-01T09:00:00Z", e);
      }
    }

    private static String literal(String s) {
      return s.isEmpty() ? null : s;
    }
  }
}
