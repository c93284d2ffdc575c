package dev.fcap.spring.demo;

import dev.fcap.spring.CapBeforeSend;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Service;

/** The application's send path: capped by fcap before the gateway is called. */
@Service
public class SmsService {
  private final List<String> gateway = new CopyOnWriteArrayList<>();

  @CapBeforeSend(recipient = "#phone", content = "#text", channel = "sms")
  public void send(String phone, String text) {
    gateway.add(phone + ": " + text);
  }

  public List<String> sentThroughTheGateway() {
    return gateway;
  }
}
