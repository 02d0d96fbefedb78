// Jest's runner, running its specs one at a time in one worker, whatever `maxWorkers` says: the
// broker specs share the brokers, and some stop and start them (jest.config.ts).
const TestRunner = require('jest-runner').default;

class SerialRunner extends TestRunner {
  constructor(globalConfig, context) {
    super({ ...globalConfig, maxWorkers: 1 }, context);
  }
}

module.exports = SerialRunner;
